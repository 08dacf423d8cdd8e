; ModuleID = '/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dcl_singleton.c'
source_filename = "/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dcl_singleton.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%struct.object = type { i32 }
%union.pthread_mutex_t = type { %struct.__pthread_mutex_s }
%struct.__pthread_mutex_s = type { i32, i32, i32, i32, i32, i16, i16, %struct.__pthread_internal_list }
%struct.__pthread_internal_list = type { %struct.__pthread_internal_list*, %struct.__pthread_internal_list* }
%union.pthread_attr_t = type { i64, [48 x i8] }

@instance = dso_local global %struct.object* null, align 8, !dbg !0
@mutex = dso_local global %union.pthread_mutex_t zeroinitializer, align 8, !dbg !13
@.str = private unnamed_addr constant [43 x i8] c"((volatile struct object *)o)->field == 42\00", align 1
@.str.1 = private unnamed_addr constant [74 x i8] c"/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dcl_singleton.c\00", align 1
@__PRETTY_FUNCTION__.reader = private unnamed_addr constant [21 x i8] c"void *reader(void *)\00", align 1
@the_object = dso_local global %struct.object zeroinitializer, align 4, !dbg !47

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i8* @reader(i8* noundef %arg) #0 !dbg !59 {
entry:
  %arg.addr = alloca i8*, align 8
  %o = alloca %struct.object*, align 8
  store i8* %arg, i8** %arg.addr, align 8
  call void @llvm.dbg.declare(metadata i8** %arg.addr, metadata !64, metadata !DIExpression()), !dbg !65
  call void @llvm.dbg.declare(metadata %struct.object** %o, metadata !66, metadata !DIExpression()), !dbg !67
  %call = call %struct.object* @get_instance(), !dbg !68
  store %struct.object* %call, %struct.object** %o, align 8, !dbg !67
  %0 = load %struct.object*, %struct.object** %o, align 8, !dbg !69
  %field = getelementptr inbounds %struct.object, %struct.object* %0, i32 0, i32 0, !dbg !69
  %1 = load volatile i32, i32* %field, align 4, !dbg !69
  %cmp = icmp eq i32 %1, 42, !dbg !69
  br i1 %cmp, label %if.then, label %if.else, !dbg !72

if.then:                                          ; preds = %entry
  br label %if.end, !dbg !72

if.else:                                          ; preds = %entry
  call void @__assert_fail(i8* noundef getelementptr inbounds ([43 x i8], [43 x i8]* @.str, i64 0, i64 0), i8* noundef getelementptr inbounds ([74 x i8], [74 x i8]* @.str.1, i64 0, i64 0), i32 noundef 28, i8* noundef getelementptr inbounds ([21 x i8], [21 x i8]* @__PRETTY_FUNCTION__.reader, i64 0, i64 0)) #5, !dbg !69
  unreachable, !dbg !69

if.end:                                           ; preds = %if.then
  ret i8* null, !dbg !73
}

; Function Attrs: nofree nosync nounwind readnone speculatable willreturn
declare void @llvm.dbg.declare(metadata, metadata, metadata) #1

; Function Attrs: noinline nounwind optnone uwtable
define internal %struct.object* @get_instance() #0 !dbg !74 {
entry:
  %0 = load volatile %struct.object*, %struct.object** @instance, align 8, !dbg !77
  %cmp = icmp eq %struct.object* %0, null, !dbg !79
  br i1 %cmp, label %if.then, label %if.end4, !dbg !80

if.then:                                          ; preds = %entry
  %call = call i32 @pthread_mutex_lock(%union.pthread_mutex_t* noundef @mutex) #6, !dbg !81
  %1 = load volatile %struct.object*, %struct.object** @instance, align 8, !dbg !83
  %cmp1 = icmp eq %struct.object* %1, null, !dbg !85
  br i1 %cmp1, label %if.then2, label %if.end, !dbg !86

if.then2:                                         ; preds = %if.then
  store i32 42, i32* getelementptr inbounds (%struct.object, %struct.object* @the_object, i32 0, i32 0), align 4, !dbg !87
  store volatile %struct.object* @the_object, %struct.object** @instance, align 8, !dbg !89
  br label %if.end, !dbg !90

if.end:                                           ; preds = %if.then2, %if.then
  %call3 = call i32 @pthread_mutex_unlock(%union.pthread_mutex_t* noundef @mutex) #6, !dbg !91
  br label %if.end4, !dbg !92

if.end4:                                          ; preds = %if.end, %entry
  %2 = load volatile %struct.object*, %struct.object** @instance, align 8, !dbg !93
  ret %struct.object* %2, !dbg !94
}

; Function Attrs: noreturn nounwind
declare void @__assert_fail(i8* noundef, i8* noundef, i32 noundef, i8* noundef) #2

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i32 @main() #0 !dbg !95 {
entry:
  %retval = alloca i32, align 4
  %t = alloca [3 x i64], align 16
  %i = alloca i32, align 4
  %i1 = alloca i32, align 4
  store i32 0, i32* %retval, align 4
  call void @llvm.dbg.declare(metadata [3 x i64]* %t, metadata !98, metadata !DIExpression()), !dbg !104
  call void @llvm.dbg.declare(metadata i32* %i, metadata !105, metadata !DIExpression()), !dbg !107
  store i32 0, i32* %i, align 4, !dbg !107
  br label %for.cond, !dbg !108

for.cond:                                         ; preds = %for.inc, %entry
  %0 = load i32, i32* %i, align 4, !dbg !109
  %cmp = icmp slt i32 %0, 3, !dbg !111
  br i1 %cmp, label %for.body, label %for.end, !dbg !112

for.body:                                         ; preds = %for.cond
  %1 = load i32, i32* %i, align 4, !dbg !113
  %idxprom = sext i32 %1 to i64, !dbg !114
  %arrayidx = getelementptr inbounds [3 x i64], [3 x i64]* %t, i64 0, i64 %idxprom, !dbg !114
  %call = call i32 @pthread_create(i64* noundef %arrayidx, %union.pthread_attr_t* noundef null, i8* (i8*)* noundef @reader, i8* noundef null) #6, !dbg !115
  br label %for.inc, !dbg !115

for.inc:                                          ; preds = %for.body
  %2 = load i32, i32* %i, align 4, !dbg !116
  %inc = add nsw i32 %2, 1, !dbg !116
  store i32 %inc, i32* %i, align 4, !dbg !116
  br label %for.cond, !dbg !117, !llvm.loop !118

for.end:                                          ; preds = %for.cond
  call void @llvm.dbg.declare(metadata i32* %i1, metadata !121, metadata !DIExpression()), !dbg !123
  store i32 0, i32* %i1, align 4, !dbg !123
  br label %for.cond2, !dbg !124

for.cond2:                                        ; preds = %for.inc8, %for.end
  %3 = load i32, i32* %i1, align 4, !dbg !125
  %cmp3 = icmp slt i32 %3, 3, !dbg !127
  br i1 %cmp3, label %for.body4, label %for.end10, !dbg !128

for.body4:                                        ; preds = %for.cond2
  %4 = load i32, i32* %i1, align 4, !dbg !129
  %idxprom5 = sext i32 %4 to i64, !dbg !130
  %arrayidx6 = getelementptr inbounds [3 x i64], [3 x i64]* %t, i64 0, i64 %idxprom5, !dbg !130
  %5 = load i64, i64* %arrayidx6, align 8, !dbg !130
  %call7 = call i32 @pthread_join(i64 noundef %5, i8** noundef null), !dbg !131
  br label %for.inc8, !dbg !131

for.inc8:                                         ; preds = %for.body4
  %6 = load i32, i32* %i1, align 4, !dbg !132
  %inc9 = add nsw i32 %6, 1, !dbg !132
  store i32 %inc9, i32* %i1, align 4, !dbg !132
  br label %for.cond2, !dbg !133, !llvm.loop !134

for.end10:                                        ; preds = %for.cond2
  ret i32 0, !dbg !136
}

; Function Attrs: nounwind
declare i32 @pthread_create(i64* noundef, %union.pthread_attr_t* noundef, i8* (i8*)* noundef, i8* noundef) #3

declare i32 @pthread_join(i64 noundef, i8** noundef) #4

; Function Attrs: nounwind
declare i32 @pthread_mutex_lock(%union.pthread_mutex_t* noundef) #3

; Function Attrs: nounwind
declare i32 @pthread_mutex_unlock(%union.pthread_mutex_t* noundef) #3

attributes #0 = { noinline nounwind optnone uwtable "frame-pointer"="all" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nofree nosync nounwind readnone speculatable willreturn }
attributes #2 = { noreturn nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #3 = { nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #4 = { "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #5 = { noreturn nounwind }
attributes #6 = { nounwind }

!llvm.dbg.cu = !{!2}
!llvm.module.flags = !{!51, !52, !53, !54, !55, !56, !57}
!llvm.ident = !{!58}

!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression())
!1 = distinct !DIGlobalVariable(name: "instance", scope: !2, file: !8, line: 11, type: !49, isLocal: false, isDefinition: true)
!2 = distinct !DICompileUnit(language: DW_LANG_C99, file: !3, producer: "Debian clang version 14.0.6", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, retainedTypes: !4, globals: !12, splitDebugInlining: false, nameTableKind: None)
!3 = !DIFile(filename: "/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dcl_singleton.c", directory: "/tmp", checksumkind: CSK_MD5, checksum: "934aa27a29771459b9e6df4c60bc37ef")
!4 = !{!5}
!5 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !6, size: 64)
!6 = !DIDerivedType(tag: DW_TAG_volatile_type, baseType: !7)
!7 = distinct !DICompositeType(tag: DW_TAG_structure_type, name: "object", file: !8, line: 8, size: 32, elements: !9)
!8 = !DIFile(filename: "/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dcl_singleton.c", directory: "", checksumkind: CSK_MD5, checksum: "934aa27a29771459b9e6df4c60bc37ef")
!9 = !{!10}
!10 = !DIDerivedType(tag: DW_TAG_member, name: "field", scope: !7, file: !8, line: 8, baseType: !11, size: 32)
!11 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!12 = !{!0, !13, !47}
!13 = !DIGlobalVariableExpression(var: !14, expr: !DIExpression())
!14 = distinct !DIGlobalVariable(name: "mutex", scope: !2, file: !8, line: 12, type: !15, isLocal: false, isDefinition: true)
!15 = !DIDerivedType(tag: DW_TAG_typedef, name: "pthread_mutex_t", file: !16, line: 72, baseType: !17)
!16 = !DIFile(filename: "/usr/include/x86_64-linux-gnu/bits/pthreadtypes.h", directory: "", checksumkind: CSK_MD5, checksum: "735e3bf264ff9d8f5d95898b1692fbdb")
!17 = distinct !DICompositeType(tag: DW_TAG_union_type, file: !16, line: 67, size: 320, elements: !18)
!18 = !{!19, !40, !45}
!19 = !DIDerivedType(tag: DW_TAG_member, name: "__data", scope: !17, file: !16, line: 69, baseType: !20, size: 320)
!20 = distinct !DICompositeType(tag: DW_TAG_structure_type, name: "__pthread_mutex_s", file: !21, line: 22, size: 320, elements: !22)
!21 = !DIFile(filename: "/usr/include/x86_64-linux-gnu/bits/struct_mutex.h", directory: "", checksumkind: CSK_MD5, checksum: "584baedd80e6041b81caae7f496091c0")
!22 = !{!23, !24, !26, !27, !28, !29, !31, !32}
!23 = !DIDerivedType(tag: DW_TAG_member, name: "__lock", scope: !20, file: !21, line: 24, baseType: !11, size: 32)
!24 = !DIDerivedType(tag: DW_TAG_member, name: "__count", scope: !20, file: !21, line: 25, baseType: !25, size: 32, offset: 32)
!25 = !DIBasicType(name: "unsigned int", size: 32, encoding: DW_ATE_unsigned)
!26 = !DIDerivedType(tag: DW_TAG_member, name: "__owner", scope: !20, file: !21, line: 26, baseType: !11, size: 32, offset: 64)
!27 = !DIDerivedType(tag: DW_TAG_member, name: "__nusers", scope: !20, file: !21, line: 28, baseType: !25, size: 32, offset: 96)
!28 = !DIDerivedType(tag: DW_TAG_member, name: "__kind", scope: !20, file: !21, line: 32, baseType: !11, size: 32, offset: 128)
!29 = !DIDerivedType(tag: DW_TAG_member, name: "__spins", scope: !20, file: !21, line: 34, baseType: !30, size: 16, offset: 160)
!30 = !DIBasicType(name: "short", size: 16, encoding: DW_ATE_signed)
!31 = !DIDerivedType(tag: DW_TAG_member, name: "__elision", scope: !20, file: !21, line: 35, baseType: !30, size: 16, offset: 176)
!32 = !DIDerivedType(tag: DW_TAG_member, name: "__list", scope: !20, file: !21, line: 36, baseType: !33, size: 128, offset: 192)
!33 = !DIDerivedType(tag: DW_TAG_typedef, name: "__pthread_list_t", file: !34, line: 55, baseType: !35)
!34 = !DIFile(filename: "/usr/include/x86_64-linux-gnu/bits/thread-shared-types.h", directory: "", checksumkind: CSK_MD5, checksum: "04c81e86d34dad9c99ad006d32e47a0d")
!35 = distinct !DICompositeType(tag: DW_TAG_structure_type, name: "__pthread_internal_list", file: !34, line: 51, size: 128, elements: !36)
!36 = !{!37, !39}
!37 = !DIDerivedType(tag: DW_TAG_member, name: "__prev", scope: !35, file: !34, line: 53, baseType: !38, size: 64)
!38 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !35, size: 64)
!39 = !DIDerivedType(tag: DW_TAG_member, name: "__next", scope: !35, file: !34, line: 54, baseType: !38, size: 64, offset: 64)
!40 = !DIDerivedType(tag: DW_TAG_member, name: "__size", scope: !17, file: !16, line: 70, baseType: !41, size: 320)
!41 = !DICompositeType(tag: DW_TAG_array_type, baseType: !42, size: 320, elements: !43)
!42 = !DIBasicType(name: "char", size: 8, encoding: DW_ATE_signed_char)
!43 = !{!44}
!44 = !DISubrange(count: 40)
!45 = !DIDerivedType(tag: DW_TAG_member, name: "__align", scope: !17, file: !16, line: 71, baseType: !46, size: 64)
!46 = !DIBasicType(name: "long", size: 64, encoding: DW_ATE_signed)
!47 = !DIGlobalVariableExpression(var: !48, expr: !DIExpression())
!48 = distinct !DIGlobalVariable(name: "the_object", scope: !2, file: !8, line: 10, type: !7, isLocal: false, isDefinition: true)
!49 = !DIDerivedType(tag: DW_TAG_volatile_type, baseType: !50)
!50 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !7, size: 64)
!51 = !{i32 7, !"Dwarf Version", i32 5}
!52 = !{i32 2, !"Debug Info Version", i32 3}
!53 = !{i32 1, !"wchar_size", i32 4}
!54 = !{i32 7, !"PIC Level", i32 2}
!55 = !{i32 7, !"PIE Level", i32 2}
!56 = !{i32 7, !"uwtable", i32 1}
!57 = !{i32 7, !"frame-pointer", i32 2}
!58 = !{!"Debian clang version 14.0.6"}
!59 = distinct !DISubprogram(name: "reader", scope: !8, file: !8, line: 26, type: !60, scopeLine: 26, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !2, retainedNodes: !63)
!60 = !DISubroutineType(types: !61)
!61 = !{!62, !62}
!62 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: null, size: 64)
!63 = !{}
!64 = !DILocalVariable(name: "arg", arg: 1, scope: !59, file: !8, line: 26, type: !62)
!65 = !DILocation(line: 26, column: 20, scope: !59)
!66 = !DILocalVariable(name: "o", scope: !59, file: !8, line: 27, type: !50)
!67 = !DILocation(line: 27, column: 18, scope: !59)
!68 = !DILocation(line: 27, column: 22, scope: !59)
!69 = !DILocation(line: 28, column: 3, scope: !70)
!70 = distinct !DILexicalBlock(scope: !71, file: !8, line: 28, column: 3)
!71 = distinct !DILexicalBlock(scope: !59, file: !8, line: 28, column: 3)
!72 = !DILocation(line: 28, column: 3, scope: !71)
!73 = !DILocation(line: 29, column: 3, scope: !59)
!74 = distinct !DISubprogram(name: "get_instance", scope: !8, file: !8, line: 14, type: !75, scopeLine: 14, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !2, retainedNodes: !63)
!75 = !DISubroutineType(types: !76)
!76 = !{!50}
!77 = !DILocation(line: 15, column: 7, scope: !78)
!78 = distinct !DILexicalBlock(scope: !74, file: !8, line: 15, column: 7)
!79 = !DILocation(line: 15, column: 16, scope: !78)
!80 = !DILocation(line: 15, column: 7, scope: !74)
!81 = !DILocation(line: 16, column: 5, scope: !82)
!82 = distinct !DILexicalBlock(scope: !78, file: !8, line: 15, column: 22)
!83 = !DILocation(line: 17, column: 9, scope: !84)
!84 = distinct !DILexicalBlock(scope: !82, file: !8, line: 17, column: 9)
!85 = !DILocation(line: 17, column: 18, scope: !84)
!86 = !DILocation(line: 17, column: 9, scope: !82)
!87 = !DILocation(line: 18, column: 24, scope: !88)
!88 = distinct !DILexicalBlock(scope: !84, file: !8, line: 17, column: 24)
!89 = !DILocation(line: 19, column: 16, scope: !88)
!90 = !DILocation(line: 20, column: 5, scope: !88)
!91 = !DILocation(line: 21, column: 5, scope: !82)
!92 = !DILocation(line: 22, column: 3, scope: !82)
!93 = !DILocation(line: 23, column: 10, scope: !74)
!94 = !DILocation(line: 23, column: 3, scope: !74)
!95 = distinct !DISubprogram(name: "main", scope: !8, file: !8, line: 32, type: !96, scopeLine: 32, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !2, retainedNodes: !63)
!96 = !DISubroutineType(types: !97)
!97 = !{!11}
!98 = !DILocalVariable(name: "t", scope: !95, file: !8, line: 33, type: !99)
!99 = !DICompositeType(tag: DW_TAG_array_type, baseType: !100, size: 192, elements: !102)
!100 = !DIDerivedType(tag: DW_TAG_typedef, name: "pthread_t", file: !16, line: 27, baseType: !101)
!101 = !DIBasicType(name: "unsigned long", size: 64, encoding: DW_ATE_unsigned)
!102 = !{!103}
!103 = !DISubrange(count: 3)
!104 = !DILocation(line: 33, column: 13, scope: !95)
!105 = !DILocalVariable(name: "i", scope: !106, file: !8, line: 34, type: !11)
!106 = distinct !DILexicalBlock(scope: !95, file: !8, line: 34, column: 3)
!107 = !DILocation(line: 34, column: 12, scope: !106)
!108 = !DILocation(line: 34, column: 8, scope: !106)
!109 = !DILocation(line: 34, column: 19, scope: !110)
!110 = distinct !DILexicalBlock(scope: !106, file: !8, line: 34, column: 3)
!111 = !DILocation(line: 34, column: 21, scope: !110)
!112 = !DILocation(line: 34, column: 3, scope: !106)
!113 = !DILocation(line: 34, column: 49, scope: !110)
!114 = !DILocation(line: 34, column: 47, scope: !110)
!115 = !DILocation(line: 34, column: 31, scope: !110)
!116 = !DILocation(line: 34, column: 27, scope: !110)
!117 = !DILocation(line: 34, column: 3, scope: !110)
!118 = distinct !{!118, !112, !119, !120}
!119 = !DILocation(line: 34, column: 65, scope: !106)
!120 = !{!"llvm.loop.mustprogress"}
!121 = !DILocalVariable(name: "i", scope: !122, file: !8, line: 35, type: !11)
!122 = distinct !DILexicalBlock(scope: !95, file: !8, line: 35, column: 3)
!123 = !DILocation(line: 35, column: 12, scope: !122)
!124 = !DILocation(line: 35, column: 8, scope: !122)
!125 = !DILocation(line: 35, column: 19, scope: !126)
!126 = distinct !DILexicalBlock(scope: !126, file: !8, line: 35, column: 3)
!127 = !DILocation(line: 35, column: 21, scope: !126)
!128 = !DILocation(line: 35, column: 3, scope: !122)
!129 = !DILocation(line: 35, column: 46, scope: !126)
!130 = !DILocation(line: 35, column: 44, scope: !126)
!131 = !DILocation(line: 35, column: 31, scope: !126)
!132 = !DILocation(line: 35, column: 27, scope: !126)
!133 = !DILocation(line: 35, column: 3, scope: !126)
!134 = distinct !{!134, !128, !135, !120}
!135 = !DILocation(line: 35, column: 51, scope: !122)
!136 = !DILocation(line: 36, column: 3, scope: !95)
